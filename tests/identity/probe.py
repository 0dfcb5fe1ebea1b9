# SPDX-License-Identifier: MIT
# What a Python program learns about the machine (tests/identity/probe.c's
# lines where Python has the path). argv[1], if given, is a directory to list.
import locale, os, platform, resource, socket, sys, time

def first(path):
    try:
        with open(path) as f:
            return f.readline().strip()
    except OSError:
        return "-"

def count(path, key):
    try:
        with open(path) as f:
            return sum(1 for l in f if l.startswith(key))
    except OSError:
        return "-"

print("cpus.affinity", len(os.sched_getaffinity(0)))
print("cpus.sysconf", os.cpu_count(), os.sysconf("SC_NPROCESSORS_CONF"))
print("cpus.cpuinfo", count("/proc/cpuinfo", "processor"))
print("cpus.stat", count("/proc/stat", "cpu"))
print("cpus.online", first("/sys/devices/system/cpu/online"))
print("cpus.possible", first("/sys/devices/system/cpu/possible"))
u = os.uname()
print("host.uname", u.nodename, "-", platform.release())
print("host.gethostname", socket.gethostname())
print("host.proc", first("/proc/sys/kernel/hostname"))
print("tz", time.strftime("%H:%M %z", time.localtime(1700000000)))
print("locale", locale.setlocale(locale.LC_ALL, ""))
m = os.umask(0); os.umask(m)
print("umask %04o" % m)
print("nofile", resource.getrlimit(resource.RLIMIT_NOFILE)[0])
print("memory.sysconf", os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGESIZE") // (1 << 20))
print("memory.meminfo", first("/proc/meminfo"))
if len(sys.argv) > 1:
    print("dir " + " ".join(n for n in os.listdir(sys.argv[1]) if not n.startswith(".")))
