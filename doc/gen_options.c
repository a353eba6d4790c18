/* gen_options.c — `gen_options man|markdown`: the option list from src/options_table.c's table, as roff
 * for doc/proftop.1 or as --help's list for README.md. `make man` puts it between the files'
 * "options: begin" and "options: end" lines; test_options fails when they hold anything else. */
#include "proftop/options.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "man")) {
		options_write_man(stdout);
	} else if (argc == 2 && !strcmp(argv[1], "markdown")) {
		options_write_markdown(stdout);
	} else {
		fputs("usage: gen_options man|markdown\n", stderr);
		return 2;
	}
	return fflush(stdout) ? 1 : 0;
}
