#!/bin/sh
# Flaky by state: the test creates a marker in the working directory and
# never removes it; it fails when one is already there, that is in every run
# after the first. hermetic hunt names the cause "state left between runs".
if [ -e hunt-leftover.marker ]; then
	echo "hunt-leftover.marker exists: left by an earlier run" >&2
	exit 1
fi
: >hunt-leftover.marker
echo ok
