#!/bin/sh
# Two processes over a file: a shell "lock" by test-then-create; both
# processes may find the lock free and both enter (the log shows two
# holders at once).
d=$(mktemp -d /tmp/schedcorpus.XXXXXX)
trap 'rm -rf "$d"' EXIT
enter() {
	if [ ! -e "$d/lock" ]; then
		echo "$1" >"$d/lock"
		echo "$1" >>"$d/holders"
	fi
}
enter a & enter b & wait
n=$(wc -l <"$d/holders")
echo "holders: $n"
[ "$n" -eq 1 ]
