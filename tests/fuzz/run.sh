#!/usr/bin/env bash
# Build the journal fuzz target (libFuzzer + ASan + UBSan) and run it for a
# bounded time; print one PASS/FAIL/SKIP line. Usage: tests/fuzz/run.sh [SECONDS]
# The corpus grows in build/fuzz/corpus across runs (FUZZ_OUT overrides
# build/fuzz). Needs clang and its libFuzzer runtime (Debian: libclang-rt-14-dev).
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
cd "$TOP"
secs=${1:-60}
OUT=${FUZZ_OUT:-$TOP/build/fuzz}
CLANG=${CLANG:-clang}
LIB="lib/journal.c lib/journal_parse.c lib/journal_read.c lib/journal_fingerprint.c lib/jstream.c lib/lineage.c lib/scope.c lib/chacha20.c lib/config.c lib/util.c"
FLAGS="-g -O1 -std=gnu11 -D_GNU_SOURCE -Iinclude -Ilib -Wall -Wextra -Werror -Wno-unused-parameter"
name=journal_fuzz

mkdir -p "$OUT/corpus" "$OUT/seeds" || exit 1
if ! command -v "$CLANG" >/dev/null 2>&1; then
	echo "SKIP fuzz $name: $CLANG not found (install clang)"
	exit 0
fi
if ! echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' |
	"$CLANG" -x c -fsanitize=fuzzer - -o "$OUT/probe" >"$OUT/probe.log" 2>&1; then
	echo "SKIP fuzz $name: no libFuzzer runtime for $CLANG (install libclang-rt-14-dev)"
	exit 0
fi
if ! "$CLANG" $FLAGS -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	tests/fuzz/$name.c $LIB -lzstd -o "$OUT/$name" >"$OUT/build.log" 2>&1; then
	echo "FAIL fuzz $name: build failed: $(tail -n 3 "$OUT/build.log" | tr '\n' '|')"
	exit 1
fi
if ! "$CLANG" $FLAGS tests/fuzz/corpus_gen.c $LIB -lzstd -o "$OUT/corpus_gen" >>"$OUT/build.log" 2>&1 ||
	! "$OUT/corpus_gen" "$OUT/seeds"; then
	echo "FAIL fuzz $name: could not build the seed corpus: $(tail -n 3 "$OUT/build.log" | tr '\n' '|')"
	exit 1
fi
# -rss_limit_mb: the reader's own caps keep it far below; a leak or an
# unbounded allocation trips it. Crashes are kept as $OUT/crash-*.
"$OUT/$name" -max_total_time="$secs" -rss_limit_mb=2048 -malloc_limit_mb=256 -max_len=65536 \
	-timeout=10 -print_final_stats=1 -artifact_prefix="$OUT/" \
	"$OUT/corpus" "$OUT/seeds" >"$OUT/run.log" 2>&1
rc=$?
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$OUT/run.log" | tail -n 1)
cov=$(grep -o 'cov: [0-9]*' "$OUT/run.log" | tail -n 1)
if [ "$rc" = 0 ]; then
	echo "PASS fuzz $name: ${secs}s, ${execs:-?} inputs, ${cov:-cov: ?}, no crash"
else
	echo "FAIL fuzz $name: exit $rc after ${execs:-?} inputs; see $OUT/run.log:"
	grep -E 'ERROR|SUMMARY|artifact|Test unit written' "$OUT/run.log" | head -n 5
	exit 1
fi
