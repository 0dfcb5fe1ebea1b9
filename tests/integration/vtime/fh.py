import faulthandler, sys
faulthandler.dump_traceback_later(120, exit=True)
sum(i*i for i in range(3*10**6))
print("done")
