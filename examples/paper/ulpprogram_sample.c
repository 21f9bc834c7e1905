/* SPDX-License-Identifier: MIT */
/* The paper's sample, part 3: an ordinary program that says which ULP it is. */
#include <stdio.h>

#include "pvas.h"

int main(void)
{
	int pvid;

	if (pvas_get_pvid(&pvid) != 0)
		return 1;
	printf("I am user-level process %d.\n", pvid);
	return 0;
}
