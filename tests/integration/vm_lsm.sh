# The BPF-LSM layer, proven where the kernel allows it: Debian's kernel
# booted under qemu (this machine refuses BPF trampolines). See tests/vm/run.sh.
source "$(dirname "$0")/../lib.sh"
need_root vm || exit 0
bash "$TOP/tests/vm/run.sh"
