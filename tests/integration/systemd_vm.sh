# The real systemd test: Debian 12 booted with systemd as PID 1 under qemu,
# the package installed with dpkg -i, the socket enabled, enrolls as a user
# in group hermetic, restart and stop. See tests/vm/systemd.sh.
source "$(dirname "$0")/../lib.sh"
need_root vm-systemd || exit 0
bash "$TOP/tests/vm/systemd.sh"
