/* SPDX-License-Identifier: MIT */
/* What identity.c (the pinned axes) hands dirorder.c (readdir's order). */
#ifndef HERMETIC_PRELOAD_IDENTITY_H
#define HERMETIC_PRELOAD_IDENTITY_H

#include <stdint.h>
#include "shim.h"

enum { HM_DIR_HOST, HM_DIR_SORTED, HM_DIR_SEEDED };

/* The order readdir follows (HM_DIR_HOST: the filesystem's; also inside
 * the shim's own initialisation) and the seeded order's key. */
int hm_id_dir_order(uint64_t *ret_key) HM_HIDDEN;

#endif
