/* Fork children of a static program (static.sh): forks never stop, so the
 * supervisor first meets a child at its first wait or getrandom. Each of
 * two children, one after the other, draws 8 bytes and sleeps 3 s; the
 * parent draws 8 bytes first. Lines: "parent HEX", "child N HEX slept MS". */
#include <stdint.h>
#include <stdio.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int64_t ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void hex(const char *what, const uint8_t *b)
{
	printf("%s ", what);
	for (int i = 0; i < 8; i++)
		printf("%02x", b[i]);
}

int main(void)
{
	uint8_t b[8];

	if (getrandom(b, sizeof(b), 0) != sizeof(b))
		return 1;
	hex("parent", b);
	printf("\n");
	fflush(stdout);
	for (int n = 1; n <= 2; n++) {
		pid_t pid = fork();

		if (pid == 0) {
			char what[16];
			int64_t t0;

			if (getrandom(b, sizeof(b), 0) != sizeof(b))
				_exit(1);
			t0 = ms();
			sleep(3);
			snprintf(what, sizeof(what), "child %d", n);
			hex(what, b);
			printf(" slept %lld\n", (long long)(ms() - t0));
			fflush(stdout);
			_exit(0);
		}
		if (pid < 0 || waitpid(pid, NULL, 0) != pid)
			return 1;
	}
	return 0;
}
