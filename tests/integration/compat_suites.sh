#!/usr/bin/env bash
# The compatibility matrix (docs/compatibility.md, tests/compat/): CPython's
# own test modules (Debian's libpython3.11-testsuite), tape's own test
# suite (from the npm registry, pinned and verified by npm ci), GLib's
# installed tests (a C event loop: Debian's libglib2.0-tests), Go's standard
# library tests (Debian's golang-1.19-src) and golang.org/x/sync's run bare and
# under `hermetic enroll` with default options, each side in a network
# namespace with only loopback and without CAP_SYS_TIME. One PASS per suite
# when every test case that passes bare passes enrolled; a FAIL names the
# cases that regress, with their output. Arguments (suite names) pass through
# to tests/compat/matrix.sh.
# timeout: 3600
# (tests/run.sh ends it past that: 1601 s measured on 2 cores loaded 5-fold (load 10-13))
exec bash "$(dirname "$0")/../compat/matrix.sh" "$@"
