# Flaky by hash seed: a set of strings has no order, but this test expects
# the one it saw once. PYTHONHASHSEED unset: the hash secret comes from the
# (seeded) entropy. hermetic hunt names the cause "randomness (entropy)".
import sys
tags = {"alpha", "beta", "gamma"}
first = next(iter(tags))
if first == "gamma":
    sys.exit("expected the first tag to be alpha or beta, got %s" % first)
print("ok")
