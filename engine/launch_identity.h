/* SPDX-License-Identifier: MIT */
/* enroll_launch's --identity steps (launch_identity.c). */
#ifndef HERMETIC_LAUNCH_IDENTITY_H
#define HERMETIC_LAUNCH_IDENTITY_H

struct enroll;
struct eng_error;

int launch_identity_prepare(struct enroll *e, struct eng_error *err);
void launch_identity_supervise(struct enroll *e);

#endif
