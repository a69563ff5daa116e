//! CuTe layout text (plain, swizzled, composed): reads or is refused, never a panic; what reads prints
//! to text that reads back to the same layout.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let _ = axe_cute::parse_int_tuple(text);
    let Ok(layout) = text.parse::<axe_cute::AnyLayout>() else {
        return;
    };
    let printed = layout.to_string();
    let again = printed
        .parse::<axe_cute::AnyLayout>()
        .unwrap_or_else(|e| panic!("{text:?} printed as {printed:?}, which does not read: {e}"));
    assert_eq!(again, layout, "{text:?} printed as {printed:?}");
});
