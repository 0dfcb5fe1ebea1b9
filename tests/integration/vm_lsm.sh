# The BPF-LSM layer, proven where the kernel allows it: Debian's kernel
# booted under qemu (this machine refuses BPF trampolines). See tests/vm/run.sh.
# timeout: 900
# (tests/run.sh ends it past that: 25 s measured on 2 cores loaded 5-fold; qemu is bounded at 300 s inside)
source "$(dirname "$0")/../lib.sh"
need_root vm || exit 0
# (a daemon of the test's own, for the host's side of the identity case)
start_daemon || { fail vm "the host's daemon did not start"; exit 0; }
bash "$TOP/tests/vm/run.sh"
