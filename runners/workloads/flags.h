/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * flags.h - db_bench-style "--name=value" arguments for the runners' C++
 * drivers (zipf_writer, ack_writer).
 */
#ifndef WALSCOPE_RUNNERS_FLAGS_H
#define WALSCOPE_RUNNERS_FLAGS_H

#include <cstring>

/* true if arg is --name=VALUE; *val then points at VALUE */
static inline bool flag(const char *arg, const char *name, const char **val)
{
	size_t n = strlen(name);

	if (strncmp(arg, name, n) || arg[n] != '=')
		return false;
	*val = arg + n + 1;
	return true;
}

#endif
