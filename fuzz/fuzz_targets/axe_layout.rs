//! Axe layout text: reads to a layout or an error, never a panic; a layout read prints to text that
//! reads back to the same layout, and is equivalent to its canonical form.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let Ok(layout) = axe_layout::parse(text) else {
        return;
    };
    let printed = layout.to_string();
    let again = axe_layout::parse(&printed)
        .unwrap_or_else(|e| panic!("{text:?} printed as {printed:?}, which does not read: {e}"));
    assert_eq!(again, layout, "{text:?} printed as {printed:?}");
    if let Ok(canonical) = layout.canonicalize() {
        if let Ok(same) = layout.equivalent(&canonical) {
            assert!(
                same,
                "{text:?} is not equivalent to its canonical form {canonical}"
            );
        }
    }
});
