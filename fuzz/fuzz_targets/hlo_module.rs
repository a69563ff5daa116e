//! HLO module text: any text is read and checked (`axe hlo stats`), or refused, never a panic; a
//! module that checks prints (`axe hlo fmt`) to text that reads back and prints the same.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let _ = axe_xla::hlo::parse_module(text);
    let Ok(checked) = axe_xla::hlo::stats::parse_checked(text) else {
        return;
    };
    let _ = checked.report_with(3, None);
    let printed = checked.module().to_string();
    let again = axe_xla::hlo::parse_module(&printed)
        .unwrap_or_else(|e| panic!("printed module does not read back: {e}\n{printed}"));
    assert_eq!(again.to_string(), printed, "printing is not stable");
});
