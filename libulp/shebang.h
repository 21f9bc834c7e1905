/* SPDX-License-Identifier: MIT */
/*
 * A "#!" line, split as the kernel's binfmt_script splits it: the interpreter, then at most one
 * argument (the rest of the line, outer blanks trimmed). One parser for the launcher's scripts
 * (launch/cmdline.c) and a ULP's execve of one (libulp/kernel/exec.c). No libc state: it may run
 * in a ULP's trap.
 */
#ifndef ULP_SHEBANG_H
#define ULP_SHEBANG_H

#include <string.h>

/* The kernel reads this much of a script (BINPRM_BUF_SIZE). */
#define ULP_SHEBANG_HEAD 256

/* buf: a file's first bytes, NUL-terminated; NULs are written into it. 1 and *interp, *arg
 * (NULL: none) when it starts with "#!" (*interp may be empty: no interpreter named); 0 when
 * it is no script. */
static inline int ulp_shebang(char *buf, char **interp, char **arg)
{
	char *s = buf + 2;
	size_t n;

	if (buf[0] != '#' || buf[1] != '!')
		return 0;
	s[strcspn(s, "\n")] = 0;
	s += strspn(s, " \t");
	*interp = s;
	*arg = NULL;
	s += strcspn(s, " \t");
	if (*s) {
		*s++ = 0;
		s += strspn(s, " \t");
		for (n = strlen(s); n && (s[n - 1] == ' ' || s[n - 1] == '\t'); n--)
			s[n - 1] = 0;
		*arg = *s ? s : NULL;
	}
	return 1;
}

#endif
