# The real systemd test: Debian 12 booted with systemd as PID 1 under qemu,
# the package installed with dpkg -i, the socket enabled, enrolls as a user
# in group hermetic, restart and stop. See tests/vm/systemd.sh.
# timeout: 1800
# (tests/run.sh ends it past that: 322 s measured on 2 cores loaded 5-fold; qemu is bounded at 900 s inside)
source "$(dirname "$0")/../lib.sh"
need_root vm-systemd || exit 0
bash "$TOP/tests/vm/systemd.sh"
