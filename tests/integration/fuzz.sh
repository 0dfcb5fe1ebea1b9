# The journal reader and thread-stream decoder under libFuzzer (ASan, UBSan)
# for a bounded time: tests/fuzz/run.sh prints the PASS/FAIL/SKIP line.
# FUZZ_SECONDS overrides the 60 s budget.
source "$(dirname "$0")/../lib.sh"

"$TOP/tests/fuzz/run.sh" "${FUZZ_SECONDS:-60}"
