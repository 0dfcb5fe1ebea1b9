#!/usr/bin/env bash
# Build the racy corpus into OUTDIR and print one line per program:
#   NAME<TAB>COMMAND...
# (C with gcc -O2 -pthread, Go with go build, Java with javac; Python and
# shell run from here). Every program exits 1 when its bug shows, 0 when
# not, 2 on a setup error.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: build.sh OUTDIR}
mkdir -p "$out"
for f in "$here"/c_*.c "$here"/proc_*.c; do
	n=$(basename "$f" .c)
	gcc -O2 -pthread -o "$out/$n" "$f"
	printf '%s\t%s\n' "$n" "$out/$n"
done
for d in "$here"/go_*/; do
	n=$(basename "$d")
	(cd "$d" && GOFLAGS=-mod=mod GO111MODULE=off go build -o "$out/$n" main.go)
	printf '%s\t%s\n' "$n" "$out/$n"
done
javac -d "$out/java" "$here"/Java*.java
for f in "$here"/Java*.java; do
	n=$(basename "$f" .java)
	printf '%s\t%s\n' "$n" "java -Xshare:auto -cp $out/java $n"
done
for f in "$here"/py_*.py; do
	printf '%s\t%s\n' "$(basename "$f" .py)" "python3 $f"
done
for f in "$here"/sh_*.sh; do
	printf '%s\t%s\n' "$(basename "$f" .sh)" "sh $f"
done
