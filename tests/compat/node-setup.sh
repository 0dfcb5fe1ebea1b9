#!/usr/bin/env bash
# node-setup.sh DIR: install tape's published package and the packages its
# own tests require into DIR/node_modules with `npm ci`, from
# tests/compat/node/package-lock.json: every package at an exact version,
# each verified against the lockfile's sha512 integrity hash (npm ci refuses
# a mismatch). Lifecycle scripts are not run. Nothing is done when DIR already
# holds this lockfile's install. Needs the npm registry, outside any run.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
dir=$1
mkdir -p "$dir"
if cmp -s "$here/node/package-lock.json" "$dir/package-lock.json" &&
	[ -f "$dir/node_modules/tape/test/exit.js" ]; then
	exit 0
fi
cp "$here/node/package.json" "$here/node/package-lock.json" "$dir/"
rm -rf "$dir/node_modules"
cd "$dir"
timeout 600 npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
