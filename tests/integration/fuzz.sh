# The libFuzzer targets (ASan, UBSan) for a bounded time each: the journal
# reader and thread-stream decoder (60 s) and hermeticd's request decoder
# (30 s); tests/fuzz/run.sh prints the PASS/FAIL/SKIP lines. FUZZ_SECONDS
# overrides both budgets.
source "$(dirname "$0")/../lib.sh"

"$TOP/tests/fuzz/run.sh" "${FUZZ_SECONDS:-60}" journal_fuzz
"$TOP/tests/fuzz/run.sh" "${FUZZ_SECONDS:-30}" request_fuzz
"$TOP/tests/fuzz/run.sh" "${FUZZ_SECONDS:-30}" dns_fuzz
