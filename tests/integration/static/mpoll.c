/* Sleeps of the poll family in a static program, on the run's clock
 * (static.sh): poll, ppoll, select and pselect of no descriptors, each
 * 2 s, then a select of 1500 ms as a timeval of 1500000 us (Linux takes
 * microseconds past a second), and pselect through libc (a mask of NULL). Each line: the call, what it returned, the
 * virtual time it took in ms, and for select, pselect and ppoll the time
 * the kernel (or the supervisor) says is left. */
#define _GNU_SOURCE
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int64_t ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int main(void)
{
	struct timespec ts = { 2, 0 };
	struct timeval tv = { 2, 0 };
	int64_t t0;
	long r;

	t0 = ms();
	r = poll(NULL, 0, 2000);
	printf("poll %ld %lld ms\n", r, (long long)(ms() - t0));
	t0 = ms();
	r = ppoll(NULL, 0, &ts, NULL);
	printf("ppoll %ld %lld ms left %ld.%09ld\n", r, (long long)(ms() - t0), (long)ts.tv_sec, ts.tv_nsec);
	ts = (struct timespec){ 2, 0 };
	t0 = ms();
	/* the raw call: libc's pselect may copy the timeout */
	r = syscall(SYS_pselect6, 0, NULL, NULL, NULL, &ts, NULL);
	printf("pselect %ld %lld ms left %ld.%09ld\n", r, (long long)(ms() - t0), (long)ts.tv_sec, ts.tv_nsec);
	ts = (struct timespec){ 2, 0 };
	t0 = ms();
	/* libc's: musl passes { NULL, 8 } as the signal mask */
	r = pselect(0, NULL, NULL, NULL, &ts, NULL);
	printf("pselect-libc %ld %lld ms\n", r, (long long)(ms() - t0));
	t0 = ms();
	r = select(0, NULL, NULL, NULL, &tv);
	printf("select %ld %lld ms left %ld.%06ld\n", r, (long long)(ms() - t0), (long)tv.tv_sec, (long)tv.tv_usec);
	tv = (struct timeval){ 0, 1500000 };
	t0 = ms();
	r = syscall(SYS_select, 0, NULL, NULL, NULL, &tv);
	printf("select-us %ld %lld ms left %ld.%06ld\n", r, (long long)(ms() - t0), (long)tv.tv_sec, (long)tv.tv_usec);
	return 0;
}
