/* Flaky by randomness: fails when a random byte is below 8 (1 run in 32).
 * hermetic hunt names the cause "randomness (entropy)". */
#include <stdio.h>
#include <sys/random.h>

int main(void)
{
	unsigned char b;

	if (getrandom(&b, 1, 0) != 1)
		return 2;
	if (b < 8) {
		fprintf(stderr, "assertion failed: random byte %u < 8\n", b);
		return 1;
	}
	puts("ok");
	return 0;
}
