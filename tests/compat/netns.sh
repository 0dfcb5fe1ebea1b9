#!/bin/sh
# netns.sh CMD...: run CMD in a network namespace of its own with only
# loopback (up), and without CAP_SYS_TIME in any process it starts, so that
# no test of a third-party suite can reach another host or set the host's
# clock. Bare and enrolled runs go through this alike. (A network namespace
# does not change the filesystem: the daemon's socket and runtime directory
# stay reachable by path.) AF_VSOCK is not a network-namespace thing: those
# tests are excluded by name (python.exclude).
set -e
[ "$#" -gt 0 ] || { echo "usage: netns.sh CMD [ARGS...]" >&2; exit 2; }
exec unshare --net -- sh -c '
	ip link set lo up || exit 125
	exec setpriv --bounding-set -sys_time --inh-caps -sys_time -- "$@"' netns.sh "$@"
