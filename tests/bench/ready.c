/* ready [--hold] [CMD...]: tell concbench this run's command has started
 * (one byte on fd 3), with --hold wait until concbench closes fd 4's other
 * end, then exec CMD (or exit 0). */
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char c;
	int i = 1;

	if (write(3, "r", 1) != 1)
		return 3;
	close(3);
	if (argc > 1 && !strcmp(argv[1], "--hold")) {
		while (read(4, &c, 1) > 0)
			;
		close(4);
		i++;
	}
	if (i < argc) {
		execvp(argv[i], argv + i);
		return 127;
	}
	return 0;
}
