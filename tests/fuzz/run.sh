#!/usr/bin/env bash
# Build libFuzzer targets (with ASan + UBSan) and run each for a bounded
# time; print one PASS/FAIL/SKIP line per target.
#   tests/fuzz/run.sh [SECONDS] [TARGET...]     (default: every target)
# Targets: journal_fuzz (the journal reader and thread-stream decoder),
# request_fuzz (hermeticd's request decoder), dns_fuzz (the resolver's DNS
# parser, lib/dnsmsg.c). Corpora grow in
# build/fuzz/TARGET/corpus across runs (FUZZ_OUT overrides build/fuzz).
# Needs clang and its libFuzzer runtime (Debian: libclang-rt-14-dev).
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
cd "$TOP"
secs=${1:-60}
[ $# -gt 0 ] && shift
targets=("$@")
[ ${#targets[@]} = 0 ] && targets=(journal_fuzz request_fuzz dns_fuzz)
OUT=${FUZZ_OUT:-$TOP/build/fuzz}
CLANG=${CLANG:-clang}
FLAGS="-g -O1 -std=gnu11 -D_GNU_SOURCE -Iinclude -Ilib -Idaemon -Wall -Wextra -Werror -Wno-unused-parameter"
JOURNAL_LIB="lib/journal.c lib/journal_parse.c lib/journal_read.c lib/journal_fingerprint.c lib/jstream.c lib/lineage.c lib/scope.c lib/chacha20.c lib/config.c lib/util.c"
REQUEST_LIB="daemon/request.c lib/proto.c lib/fdpass.c lib/util.c lib/dnsmsg.c"
DNS_LIB="lib/dnsmsg.c"
rc=0

mkdir -p "$OUT" || exit 1
if ! command -v "$CLANG" >/dev/null 2>&1; then
	for t in "${targets[@]}"; do echo "SKIP fuzz $t: $CLANG not found (install clang)"; done
	exit 0
fi
if ! echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' |
	"$CLANG" -x c -fsanitize=fuzzer - -o "$OUT/probe" >"$OUT/probe.log" 2>&1; then
	for t in "${targets[@]}"; do echo "SKIP fuzz $t: no libFuzzer runtime for $CLANG (install libclang-rt-14-dev)"; done
	exit 0
fi

# build_seeds TARGET DIR: the target's seed corpus.
build_seeds() {
	case $1 in
	journal_fuzz)
		"$CLANG" $FLAGS tests/fuzz/corpus_gen.c $JOURNAL_LIB -lzstd -o "$OUT/$1/seedgen" &&
			"$OUT/$1/seedgen" "$2" ;;
	request_fuzz)
		"$CLANG" $FLAGS -DREQUEST_SEEDS tests/fuzz/request_fuzz.c $REQUEST_LIB -o "$OUT/$1/seedgen" &&
			"$OUT/$1/seedgen" "$2" ;;
	dns_fuzz)
		"$CLANG" $FLAGS -DDNS_SEEDS tests/fuzz/dns_fuzz.c $DNS_LIB -o "$OUT/$1/seedgen" &&
			"$OUT/$1/seedgen" "$2" ;;
	esac
}

for name in "${targets[@]}"; do
	D=$OUT/$name
	case $name in
	journal_fuzz) lib=$JOURNAL_LIB libs=-lzstd max_len=65536 ;;
	request_fuzz) lib=$REQUEST_LIB libs= max_len=$((65536 + 64)) ;;
	dns_fuzz) lib=$DNS_LIB libs= max_len=4096 ;;
	*) echo "FAIL fuzz $name: no such target"; rc=1; continue ;;
	esac
	mkdir -p "$D/corpus" "$D/seeds" || exit 1
	if ! "$CLANG" $FLAGS -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
		tests/fuzz/$name.c $lib $libs -o "$D/$name" >"$D/build.log" 2>&1; then
		echo "FAIL fuzz $name: build failed: $(tail -n 3 "$D/build.log" | tr '\n' '|')"
		rc=1
		continue
	fi
	if ! build_seeds "$name" "$D/seeds" >>"$D/build.log" 2>&1; then
		echo "FAIL fuzz $name: could not build the seed corpus: $(tail -n 3 "$D/build.log" | tr '\n' '|')"
		rc=1
		continue
	fi
	# -rss_limit_mb: the decoders' own caps keep them far below; a leak or
	# an unbounded allocation trips it. Crashes are kept as $D/crash-*.
	"$D/$name" -max_total_time="$secs" -rss_limit_mb=2048 -malloc_limit_mb=256 -max_len="$max_len" \
		-timeout=10 -print_final_stats=1 -artifact_prefix="$D/" \
		"$D/corpus" "$D/seeds" >"$D/run.log" 2>&1
	r=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$D/run.log" | tail -n 1)
	cov=$(grep -o 'cov: [0-9]*' "$D/run.log" | tail -n 1)
	if [ "$r" = 0 ]; then
		echo "PASS fuzz $name: ${secs}s, ${execs:-?} inputs, ${cov:-cov: ?}, no crash"
	else
		echo "FAIL fuzz $name: exit $r after ${execs:-?} inputs; see $D/run.log:"
		grep -E 'ERROR|SUMMARY|artifact|Test unit written' "$D/run.log" | head -n 5
		rc=1
	fi
done
exit $rc
