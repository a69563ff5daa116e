//! Triton layouts (TTGIR attribute text, the linear-layout text, JSON): read or refused, never a panic;
//! a layout read writes to JSON that reads back to the same layout.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    for read in [
        axe_triton::parse_ttg,
        axe_triton::parse_linear,
        axe_triton::parse_json,
    ] {
        if let Ok(layout) = read(text) {
            let json = layout.to_json();
            let again = axe_triton::parse_json(&json)
                .unwrap_or_else(|e| panic!("{text:?} wrote {json:?}, which does not read: {e}"));
            assert_eq!(again, layout, "{text:?} wrote {json:?}");
        }
    }
});
