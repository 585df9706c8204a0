// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * collect_window_log.c - windows.tsv (collect_window_log.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include "collect_outputs.h"
#include "collect_window_log.h"

static FILE *window_log;

int window_log_open(void)
{
	window_log = open_out("windows.tsv");
	return window_log ? 0 : -1;
}

void window_line(const char *fmt, ...)
{
	va_list ap;

	if (!window_log)
		return;
	va_start(ap, fmt);
	vfprintf(window_log, fmt, ap);
	va_end(ap);
	if (fflush(window_log))
		fail_write("windows.tsv");
}

void window_log_close(void)
{
	if (window_log)
		close_out(window_log, "windows.tsv");
	window_log = NULL;
}
