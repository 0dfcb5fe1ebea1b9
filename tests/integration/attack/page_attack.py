# Run B's attack on run A (tests/integration/trust_page.sh): B is another
# run of the same user. It looks for A's seed in /proc/A/environ, for A's
# clock page in /proc/A/maps, /proc/A/fd and the daemon's clock directory,
# opens whatever it finds, and where an open succeeds moves A's wall clock
# 10 years ahead (wall_off, include/hermetic/vclock.h). Prints one JSON
# object of what happened.
import errno, json, os, struct, sys

apid, seed, rundir = int(sys.argv[1]), sys.argv[2], sys.argv[3]
clockdir = os.path.join(rundir, "clock")
WALL_OFF = 24  # offset of wall_off in struct hm_vclock
TEN_YEARS = 10 * 365 * 86400 * 10**9
res = {"moved": []}


def err(e):
    return errno.errorcode.get(e.errno, str(e.errno))


def attack(path):
    """Open path read-write and move the clock it holds; the outcome."""
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError as e:
        return err(e)
    try:
        (off,) = struct.unpack("<q", os.pread(fd, 8, WALL_OFF))
        os.pwrite(fd, struct.pack("<q", off + TEN_YEARS), WALL_OFF)
        res["moved"].append(path)
        return "opened"
    except OSError as e:
        return "opened, " + err(e)
    finally:
        os.close(fd)


# environ: the seed, a page path
try:
    env = open("/proc/%d/environ" % apid, "rb").read()
    res["environ"] = "read"
    res["environ_run"] = b"HERMETIC_RUN=" in env
    vals = [kv.split(b"=", 1) for kv in env.split(b"\0") if b"=" in kv]
    res["secrets"] = [k.decode() for k, v in vals
                      if k in (b"HERMETIC_SEED", b"HERMETIC_CLOCK_PAGE") or v == seed.encode()]
    res["env_paths"] = {v.decode(): attack(v.decode()) for k, v in vals
                        if v.startswith(rundir.encode())}
except OSError as e:
    res["environ"] = err(e)

# maps: every mapping under the daemon's runtime directory or named a clock
try:
    maps = open("/proc/%d/maps" % apid).read()
    res["maps"] = "read"
    paths = set()
    for line in maps.splitlines():
        f = line.split(None, 5)
        if len(f) == 6 and (f[5].startswith(rundir) or "clock" in f[5]) and not f[5].startswith("["):
            paths.add(f[5].replace(" (deleted)", ""))
    res["map_paths"] = {p: attack(p) for p in sorted(paths)}
except OSError as e:
    res["maps"] = err(e)

# the descriptors themselves
try:
    fds = os.listdir("/proc/%d/fd" % apid)
    res["fd"] = "listed"
    res["fd_opens"] = {}
    for n in fds:
        try:
            link = os.readlink("/proc/%d/fd/%s" % (apid, n))
        except OSError as e:
            res["fd_opens"][n] = "readlink " + err(e)
            continue
        if "clock" in link or link.startswith(rundir):
            res["fd_opens"][n] = attack("/proc/%d/fd/%s" % (apid, n))
except OSError as e:
    res["fd"] = err(e)

# the clock directory: listed, and every name in it opened
try:
    names = os.listdir(clockdir)
    res["dir"] = names
    res["dir_opens"] = {n: attack(os.path.join(clockdir, n)) for n in names}
except OSError as e:
    res["dir"] = err(e)

print(json.dumps(res, sort_keys=True))
