//! Tests of `table::mbr`.
use super::*;

fn ent(boot: u8, sys: u8, start: u32, size: u32) -> [u8; 16] {
    let mut e = [0u8; 16];
    e[0] = boot;
    e[4] = sys;
    e[8..12].copy_from_slice(&start.to_le_bytes());
    e[12..16].copy_from_slice(&size.to_le_bytes());
    e
}

fn put(img: &mut [u8], lba: u64, entries: &[[u8; 16]], sig: bool) {
    let o = lba as usize * 512;
    for (i, e) in entries.iter().enumerate() {
        img[o + 446 + 16 * i..o + 462 + 16 * i].copy_from_slice(e);
    }
    if sig {
        img[o + 510] = 0x55;
        img[o + 511] = 0xAA;
    }
}

/// Counts reads, to prove that each EBR is read once.
struct Counting<'a>(&'a [u8], std::cell::Cell<usize>);
impl ByteSource for Counting<'_> {
    fn len(&self) -> u64 {
        self.0.len() as u64
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        self.1.set(self.1.get() + 1);
        self.0.read_at(offset, buf)
    }
}

fn chain_image(n: usize) -> Vec<u8> {
    let mut img = vec![0u8; 512 * (2048 + 100 * n + 10)];
    put(
        &mut img,
        0,
        &[ent(0, 0x05, 2048, (100 * n) as u32 + 8)],
        true,
    );
    for k in 0..n {
        let lba = 2048 + 100 * k as u64;
        let link = if k + 1 < n {
            ent(0, 0x05, 100 * (k as u32 + 1), 100)
        } else {
            [0; 16]
        };
        put(&mut img, lba, &[ent(0, 0x83, 2, 90), link], true);
    }
    img
}

use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]
    /// Whatever the chain (links anywhere on a 256-sector disk: loops, backward, outside, past the end; any
    /// types, flags and sizes), the reader reads LBA 0 and each distinct EBR sector once, stops by #60, and
    /// numbers logicals uniquely from 5.
    #[test]
    fn any_chain_reads_each_ebr_once_and_stops_by_60(
        ext in (0u32..300, 0u32..300, 0usize..4),
        ebrs in proptest::collection::vec(
            (0u32..260, any::<u8>(), prop_oneof![Just(0x05u8), Just(0x0f), Just(0x83), Just(0)], 0u32..3,
             0u32..4, any::<u8>(), 0u32..300, 0u32..4, any::<bool>()),
            0..40),
    ) {
        let mut img = vec![0u8; 512 * 256];
        let (ext_start, ext_size, ext_slot) = ext;
        put(&mut img, 0, &[[0; 16]; 4][..ext_slot].iter().copied()
            .chain([ent(0, 0x05, ext_start, ext_size)]).collect::<Vec<_>>(), true);
        for (k, (link, flag, link_ty, link_size, data_start, data_ty, data_size, slot, sig)) in
            ebrs.iter().enumerate()
        {
            let lba = (u64::from(ext_start) + 2 * k as u64) % 256;
            let data = ent(*flag, *data_ty, *data_start, *data_size);
            let link = ent(0, *link_ty, *link, *link_size);
            let mut slots = [[0u8; 16]; 4];
            slots[*slot as usize] = data;
            slots[(*slot as usize + 1) % 4] = link;
            put(&mut img, lba, &slots, *sig);
        }
        let src = Counting(&img, std::cell::Cell::new(0));
        let lba0 = read_lba0(&src).expect("lba0");
        src.1.set(0);
        let (_, parts, _, sectors) = read(&src, 512, &lba0);
        prop_assert!(src.1.get() <= 1 + sectors.len() + 1, "reads {} for {} EBRs", src.1.get(), sectors.len());
        prop_assert!(sectors.len() <= MAX_PARTS - 4);
        let mut numbers: Vec<u32> = parts.iter().map(|p| p.number).collect();
        prop_assert!(numbers.iter().all(|n| *n <= MAX_PARTS as u32));
        numbers.sort_unstable();
        numbers.dedup();
        prop_assert_eq!(numbers.len(), parts.len(), "unique numbers");
    }
}

#[test]
fn eight_and_more_logicals_read_with_one_read_per_ebr() {
    for n in [8usize, 20, 56] {
        let img = chain_image(n);
        let src = Counting(&img, std::cell::Cell::new(0));
        let lba0 = read_lba0(&src).expect("lba0");
        src.1.set(0);
        let (_, parts, findings, ebrs) = read(&src, 512, &lba0);
        assert_eq!(ebrs.len(), n);
        let logicals: Vec<_> = parts
            .iter()
            .filter(|p| p.kind == PartKind::Logical)
            .collect();
        assert_eq!(logicals.len(), n);
        assert_eq!(logicals.last().map(|p| p.number), Some(4 + n as u32));
        assert!(findings.is_empty(), "{findings:?}");
        assert_eq!(src.1.get(), n + 1, "LBA 0, then one read per EBR");
    }
}

#[test]
fn looping_chain_is_capped_at_60_with_a_finding_and_read_once() {
    let mut img = chain_image(3);
    // The third EBR links back to the second.
    put(
        &mut img,
        2048 + 200,
        &[ent(0, 0x83, 2, 90), ent(0, 0x05, 100, 100)],
        true,
    );
    let src = Counting(&img, std::cell::Cell::new(0));
    let lba0 = read_lba0(&src).expect("lba0");
    src.1.set(0);
    let (_, parts, findings, ebrs) = read(&src, 512, &lba0);
    assert_eq!(ebrs, vec![2048, 2148, 2248], "each EBR once");
    let max = parts.iter().map(|p| p.number).max();
    assert_eq!(max, Some(60));
    assert!(findings
        .iter()
        .any(|f| f.code == "ebr-chain-anomaly" && f.message.contains("loops")));
    assert_eq!(src.1.get(), 1 + 3, "LBA 0, then each EBR once");
}
