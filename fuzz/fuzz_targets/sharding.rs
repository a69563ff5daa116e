//! Shardings in any notation: read onto a 2×4 mesh (and without one), or refused, never a panic; a
//! sharding read prints in every notation that can express it to text that reads back to a sharding
//! that gives every device the same region (the notations differ in how they split uneven dims, which
//! is the same split where dims divide evenly).
#![no_main]
use axe_shard::{parse_any, print, Mesh, Notation};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let Ok(mesh) = Mesh::new(&[("x", 2), ("y", 4)]) else {
        return;
    };
    let dims = [8u64, 12];
    let _ = parse_any(text, None, None, &dims);
    let Ok((mesh, sharding)) = parse_any(text, None, Some(&mesh), &dims) else {
        return;
    };
    for notation in Notation::ALL {
        if let Ok(printed) = print(notation, &mesh, &sharding) {
            let (_, again) = parse_any(&printed, Some(notation), Some(&mesh), &dims)
                .unwrap_or_else(|e| {
                    panic!("{text:?} printed as {printed:?}, which does not read: {e}")
                });
            assert_eq!(
                again.regions(&mesh).ok(),
                sharding.regions(&mesh).ok(),
                "{text:?} printed in {} as {printed:?}",
                notation.name()
            );
        }
    }
});
