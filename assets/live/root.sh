# Sourced by build.sh: build_root ROOT fills the initrd tree ROOT (busybox, kernel modules, tools with their
# libraries, afdisk, the vendor tools, the init scripts of assets/live/rootfs). Uses build.sh's KVER, MODDIR,
# AFDISK, TOOLS_DIR, LIVE_ID, WORK, HERE, die and note. Writes WORK/packages.txt (the Debian package of every
# copied file, for the licenses) and WORK/vendor-tools.txt (the --with-tools names).

# Kernel modules (names as modules.dep spells them, '-' and '_' alike) and their dependencies.
LIVE_MODULES=(
    # SATA/AHCI and the IDE of QEMU's CD drive
    ahci ata_piix ata_generic
    # SAS and RAID HBAs
    mpt3sas megaraid_sas smartpqi hpsa aacraid
    # NVMe (vmd: Intel VMD puts laptop NVMe behind it)
    nvme vmd
    # virtio
    virtio_pci virtio_blk virtio_scsi
    # USB: controllers, storage, keyboards
    xhci_pci ehci_pci ohci_pci uhci_hcd usb_storage uas usbhid hid_generic
    # SCSI disk, generic, CD, loop
    sd_mod sg sr_mod loop
    # file systems it mounts, and their code pages
    isofs vfat nls_cp437 nls_ascii nls_utf8 nls_iso8859_1 ext4 xfs fuse
    # the checksums that sd_mod, nvme, ext4 and xfs ask for (busybox modprobe ignores softdeps)
    crc32c_generic crct10dif_generic crc64_rocksoft_generic
)

# Tools: "command:package". All are required except those marked '?'.
LIVE_TOOLS=(
    nvme:nvme-cli hdparm:hdparm
    sg_format:sg3-utils sg_readcap:sg3-utils sg_inq:sg3-utils sg_vpd:sg3-utils sg_turs:sg3-utils
    sg_sat_identify:sg3-utils sg_opcodes:sg3-utils sg_requests:sg3-utils
    mke2fs:e2fsprogs e2fsck:e2fsprogs resize2fs:e2fsprogs tune2fs:e2fsprogs dumpe2fs:e2fsprogs
    debugfs:e2fsprogs
    mkfs.xfs:xfsprogs xfs_repair:xfsprogs xfs_growfs:xfsprogs xfs_db:xfsprogs
    mkfs.fat:dosfstools fsck.fat:dosfstools fatlabel:dosfstools
    ntfsfix:ntfs-3g ntfsresize:ntfs-3g mkntfs:ntfs-3g ntfslabel:ntfs-3g ntfs-3g:ntfs-3g
    sfdisk:fdisk blkid:util-linux wipefs:util-linux losetup:mount partx:util-linux blockdev:util-linux
    lsblk:util-linux
    'sgdisk?:gdisk'
)
# Names that are the same program under another name: "link:target".
LIVE_LINKS=(mkfs.ext4:mke2fs mkfs.ext3:mke2fs mkfs.ext2:mke2fs fsck.ext4:e2fsck fsck.ext3:e2fsck
    fsck.ext2:e2fsck mkfs.vfat:mkfs.fat fsck.vfat:fsck.fat mount.ntfs-3g:ntfs-3g mount.ntfs:ntfs-3g)

# The Debian package that owns PATH (merged-/usr aware), or nothing.
pkg_of() {
    local p=$1 alt
    case $p in /usr/*) alt=${p#/usr} ;; *) alt=/usr$p ;; esac
    dpkg-query -S "$p" 2>/dev/null | head -n1 | cut -d: -f1 && return 0
    dpkg-query -S "$alt" 2>/dev/null | head -n1 | cut -d: -f1 || true
}

# Libraries (and the loader) a dynamic executable needs, one path a line; nothing for a static one.
needed_libs() {
    local out
    out=$(ldd "$1" 2>&1) || return 0 # "not a dynamic executable"
    if grep -q 'not found' <<< "$out"; then
        die "libraries of $1 not found: $(grep 'not found' <<< "$out" | tr -s ' \t\n' ' ')"
    fi
    awk '$2 == "=>" && $3 ~ /^\// { print $3; next } $1 ~ /^\// { print $1 }' <<< "$out"
}

# copy_exe ROOT SRC DEST: the executable and its libraries (libraries at their own paths).
copy_exe() {
    local root=$1 src=$2 dest=$3 lib
    mkdir -p "$root/$(dirname "$dest")"
    cp -L "$src" "$root/$dest"
    chmod 0755 "$root/$dest"
    pkg_of "$(readlink -f "$src")" >> "$WORK/packages.txt"
    while IFS= read -r lib; do
        [[ -e $root/$lib ]] && continue
        mkdir -p "$root/$(dirname "$lib")"
        cp -L "$lib" "$root/$lib"
        pkg_of "$(readlink -f "$lib")" >> "$WORK/packages.txt"
    done < <(needed_libs "$src")
}

# Copies the named modules and their dependencies from MODDIR, then runs depmod on the copy.
copy_modules() {
    local root=$1 line rel name want
    declare -A wanted=()
    for want in "${LIVE_MODULES[@]}"; do wanted[${want//-/_}]=1; done
    local -a chosen=()
    while IFS= read -r line; do
        rel=${line%%:*}
        name=${rel##*/}; name=${name%%.ko*}; name=${name//-/_}
        [[ -n ${wanted[$name]:-} ]] || continue
        unset "wanted[$name]"
        chosen+=("$rel")
        for rel in ${line#*:}; do chosen+=("$rel"); done
    done < "$MODDIR/modules.dep"
    for name in "${!wanted[@]}"; do
        grep -qE "/${name//_/[-_]}\.ko" "$MODDIR/modules.builtin" 2>/dev/null ||
            note "module $name is not in $KVER (left out)"
    done
    mkdir -p "$root/lib/modules/$KVER"
    while IFS= read -r rel; do
        mkdir -p "$root/lib/modules/$KVER/$(dirname "$rel")"
        cp "$MODDIR/$rel" "$root/lib/modules/$KVER/$rel"
    done < <(printf '%s\n' "${chosen[@]}" | sort -u)
    cp "$MODDIR"/modules.builtin "$MODDIR"/modules.order "$root/lib/modules/$KVER/" 2>/dev/null || true
    [[ -r $MODDIR/modules.builtin.modinfo ]] && cp "$MODDIR/modules.builtin.modinfo" "$root/lib/modules/$KVER/"
    depmod -b "$root" "$KVER" || die "depmod failed on the image's modules"
    pkg_of "$MODDIR/kernel" >> "$WORK/packages.txt"
}

build_root() {
    local root=$1 t name pkg opt p a l
    : > "$WORK/packages.txt"
    : > "$WORK/vendor-tools.txt"
    mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,usr/local/bin,usr/local/sbin,proc,sys,dev,tmp,run,root,mnt}
    mkdir -p "$root"/{media,etc,var/lib,var/log}
    chmod 1777 "$root/tmp"
    # busybox and its applets (a real tool of the same name, in /usr/sbin, comes first on PATH).
    p=$(command -v busybox)
    cp -L "$p" "$root/bin/busybox"
    chmod 0755 "$root/bin/busybox"
    pkg_of "$(readlink -f "$p")" >> "$WORK/packages.txt"
    while IFS= read -r a; do
        [[ $a == */* && $a != bin/busybox && ! -e $root/$a ]] || continue
        ln -s /bin/busybox "$root/$a"
    done < <("$root/bin/busybox" --list-full)
    # The tools.
    for t in "${LIVE_TOOLS[@]}"; do
        name=${t%%:*}; pkg=${t#*:}; opt=0
        [[ $name == *'?' ]] && { name=${name%'?'}; opt=1; }
        if ! p=$(command -v "$name"); then
            ((opt)) && { note "optional tool $name not found (apt-get install $pkg); left out"; continue; }
            die "tool '$name' is missing (apt-get install $pkg)"
        fi
        copy_exe "$root" "$p" "usr/sbin/$name"
    done
    for l in "${LIVE_LINKS[@]}"; do
        [[ -e $root/usr/sbin/${l#*:} ]] && ln -sf "${l#*:}" "$root/usr/sbin/${l%%:*}"
    done
    [[ -r /etc/mke2fs.conf ]] && cp /etc/mke2fs.conf "$root/etc/"
    # afdisk, static.
    cp -L "$AFDISK" "$root/usr/local/bin/afdisk"
    chmod 0755 "$root/usr/local/bin/afdisk"
    # The vendor tools the user supplied.
    if [[ -n $TOOLS_DIR ]]; then
        while IFS= read -r -d '' p; do
            [[ -x $p ]] || continue
            copy_exe "$root" "$p" "usr/local/sbin/${p##*/}"
            printf '%s\n' "${p##*/}" >> "$WORK/vendor-tools.txt"
        done < <(find "$TOOLS_DIR" -maxdepth 1 -type f -print0 | LC_ALL=C sort -z)
        [[ -s $WORK/vendor-tools.txt ]] || note "--with-tools $TOOLS_DIR holds no executable file"
    fi
    copy_modules "$root"
    # The init scripts and configuration.
    cp -R "$HERE/rootfs/." "$root/"
    chmod 0755 "$root/init" "$root"/usr/local/bin/afdisk-*
    printf 'LIVE_ID=%s\n' "$LIVE_ID" > "$root/etc/afdisk-live.id"
    printf 'root:x:0:0:root:/root:/bin/sh\n' > "$root/etc/passwd"
    printf 'root:x:0:\n' > "$root/etc/group"
    ln -sf /proc/mounts "$root/etc/mtab"
}
