/* SPDX-License-Identifier: MIT */
/* Error messages: every refusal names the file (and the interpreter) and says why. */
#include <stdarg.h>
#include <stdio.h>

#include "internal.h"

int ulp_ld_fail(const struct ulp_ld_err *e, int code, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!e->buf || !e->len)
		return code;
	if (e->interp)
		n = snprintf(e->buf, e->len, "%s: interpreter %s: ", e->path, e->interp);
	else
		n = snprintf(e->buf, e->len, "%s: ", e->path);
	if (n < 0 || (size_t)n >= e->len)
		return code; /* snprintf has NUL-terminated the truncated prefix */
	va_start(ap, fmt);
	vsnprintf(e->buf + n, e->len - n, fmt, ap);
	va_end(ap);
	return code;
}
