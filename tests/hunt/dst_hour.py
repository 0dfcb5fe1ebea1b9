# Flaky by date: an "elapsed local hours since midnight" that assumes every
# day has 24 hours fails on the days the clocks change in New York.
# hermetic hunt names the cause "date/time".
import os, sys, time
os.environ["TZ"] = "America/New_York"
time.tzset()
now = time.time()
lt = time.localtime(now)
midnight = time.mktime((lt.tm_year, lt.tm_mon, lt.tm_mday, 0, 0, 0, 0, 0, -1))
hours = (now - midnight) / 3600
if abs(hours - (lt.tm_hour + lt.tm_min / 60 + lt.tm_sec / 3600)) > 0.01:
    sys.exit("local hours since midnight %.2f != wall clock hour %d" % (hours, lt.tm_hour))
print("ok")
