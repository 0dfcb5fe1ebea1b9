# Flaky by machine: "an invoice may not be dated in the future" compares the
# local date with UTC's, which fails east of UTC once local midnight has
# passed and UTC's has not (at 12:00 UTC: in Kiritimati, +14, it is already
# tomorrow). hermetic hunt --vary identity names the cause
# "identity (time zone)".
import datetime, sys, time

now = time.time()
local = datetime.date.fromtimestamp(now)
utc = datetime.datetime.fromtimestamp(now, datetime.timezone.utc).date()
if local > utc:
    sys.exit("invoice dated %s, in the future of %s (UTC)" % (local, utc))
print("ok", local)
