#!/usr/bin/env bash
# A real systemd test: boot Debian 12 with systemd as PID 1 under qemu (TCG)
# from the root filesystem tests/debroot.sh builds, install the package
# (make deb) with dpkg -i, enable the socket, and as an unprivileged user in
# group hermetic enroll a command whose connection to a test host (in a
# network namespace inside the VM) is refused; restart the service during a
# running run and stop it. Prints PASS/FAIL lines. Needs root, qemu, the
# host's Debian kernel and initrd (make deps installs them).
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
KERNEL=${HERMETIC_VM_KERNEL:-$(ls -1 /boot/vmlinuz-* 2>/dev/null | sort -V | tail -n 1)}
KVER=${KERNEL#/boot/vmlinuz-}
INITRD=/boot/initrd.img-$KVER
for f in "$KERNEL" "$INITRD" "/lib/modules/$KVER/kernel/drivers/net/veth.ko" \
	"/lib/modules/$KVER/kernel/net/unix/unix_diag.ko"; do
	[ -r "$f" ] || { echo "FAIL vm-systemd: $f is missing (linux-image-amd64, initramfs-tools)"; exit 1; }
done
for t in qemu-system-x86_64 mke2fs; do
	command -v $t >/dev/null || { echo "FAIL vm-systemd: $t not installed"; exit 1; }
done
W=$(mktemp -d /tmp/hmsysvm.XXXXXX)
trap 'rm -rf "$W"' EXIT

tar=$("$TOP/tests/debroot.sh" 2>"$W/debroot.log") || {
	echo "FAIL vm-systemd: a Debian root from mmdebstrap: $(tail -n 5 "$W/debroot.log" | tr '\n' '|')"
	exit 1
}
make -s -C "$TOP" deb >"$W/deb.log" 2>&1 || {
	echo "FAIL vm-systemd: make deb: $(tail -n 5 "$W/deb.log" | tr '\n' '|')"
	exit 1
}
R=$W/root
mkdir "$R" && tar -xf "$tar" -C "$R"
cp "$TOP"/build/hermetic_*_amd64.deb "$R/root/hermetic.deb"
cp "/lib/modules/$KVER/kernel/drivers/net/veth.ko" "$R/root/veth.ko"
# unix_diag where a Debian system has it, for the kernel to load on the
# daemon's first sock_diag request (its peer check before Linux 6.5).
mkdir -p "$R/lib/modules/$KVER/kernel/net/unix"
cp "/lib/modules/$KVER/kernel/net/unix/unix_diag.ko" "$R/lib/modules/$KVER/kernel/net/unix/"
depmod -b "$R" "$KVER" 2>/dev/null || { echo "FAIL vm-systemd: depmod -b for unix_diag"; exit 1; }
echo hmvm >"$R/etc/hostname"
: >"$R/etc/fstab"
# Nothing asks for a login; the test unit runs once the system is up.
ln -sf /dev/null "$R/etc/systemd/system/getty@.service"
ln -sf /dev/null "$R/etc/systemd/system/serial-getty@.service"
cat >"$R/etc/systemd/system/hermetic-vmtest.service" <<'EOF'
[Unit]
Description=hermetic's systemd test
After=multi-user.target

[Service]
Type=oneshot
ExecStart=/root/vmtest.sh
StandardOutput=tty
StandardError=tty
TTYPath=/dev/ttyS0

[Install]
WantedBy=multi-user.target
EOF
ln -s ../hermetic-vmtest.service "$R/etc/systemd/system/multi-user.target.wants/hermetic-vmtest.service"
install -m 0755 "$TOP/tests/vm/systemd_inside.sh" "$R/root/vmtest.sh"

mke2fs -q -t ext4 -L root -d "$R" "$W/disk.img" 1500M >/dev/null || { echo "FAIL vm-systemd: mke2fs -d"; exit 1; }
rm -rf "$R"
start=$(date +%s)
timeout 900 qemu-system-x86_64 -accel tcg -m 1536 -smp 1 -nographic -no-reboot -nic none \
	-drive "file=$W/disk.img,format=raw,if=virtio" -kernel "$KERNEL" -initrd "$INITRD" \
	-append "root=/dev/vda rw console=ttyS0 panic=-1 quiet loglevel=3 systemd.show_status=0 net.ifnames=0" \
	>"$W/console.log" 2>&1 </dev/null
tr -d '\r' <"$W/console.log" | grep -E '^(PASS|FAIL|SKIP) '
if ! grep -q VM-DONE "$W/console.log"; then
	echo "FAIL vm-systemd: the VM did not finish: $(tail -n 25 "$W/console.log" | tr -d '\r' | tr '\n' '|')"
	exit 1
fi
echo "(vm-systemd: booted, tested and powered off in $(($(date +%s) - start))s)"
