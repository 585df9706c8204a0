/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * calibrate.gen.h - generated from the engine registry (engines/) by
 * `make golden` (engines/bpf_units.py): do not edit.
 * Each engine's play in walscope-calibrate (probes/<name>.cal.h, where
 * it has one: static void <name>_calibrate(struct ws_cal *c), which
 * measures its probes' costs and gives them with cal_field()), and
 * ws_calibrate_engines(), which plays them in the registry's order.
 * Included by collectors/walscope_calibrate.c after its helpers.
 */

#ifndef __WS_CALIBRATE_GEN_H
#define __WS_CALIBRATE_GEN_H

#include "rocksdb.cal.h"
#include "sqlite.cal.h"

static void ws_calibrate_engines(struct ws_cal *c)
{
	rocksdb_calibrate(c);
	sqlite_calibrate(c);
}

#endif /* __WS_CALIBRATE_GEN_H */
